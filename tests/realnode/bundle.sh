#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Copies build/dralet and the shared libraries it links (all but the C
# library's own) into DIR (default .realnode), for a node that lacks
# Debian's packages, with DIR/dralet a wrapper that points the loader at
# them (for dralet alone, not the tools it runs). The C library stays the
# node's: built on Debian 12 (glibc 2.36), the binary runs on any newer
# glibc. Then: `python3 DIR/realnode.py DIR/dralet OUTDIR`.
set -eu
dir=${1:-.realnode}
bin=${DRALET:-build/dralet}
[ -x "$bin" ] || { echo "bundle.sh: $bin is not built (make build/dralet)" >&2; exit 1; }
rm -rf "$dir"
mkdir -p "$dir/lib"
cp "$bin" "$dir/dralet.bin"
cat >"$dir/dralet" <<'EOF'
#!/bin/sh
here=$(dirname "$(readlink -f "$0")")
LD_LIBRARY_PATH=$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} exec "$here/dralet.bin" "$@"
EOF
chmod +x "$dir/dralet"
cp tests/realnode/realnode.py "$dir/"
${CC:-cc} -std=c11 -Wall -Wextra -Werror -O2 -o "$dir/cuinit" tests/realnode/cuinit.c
# with the libraries dralet opens with dlopen (agent/daemon/mhd_loader.c,
# agent/kube/curl_loader.c) and theirs
libs=$(for f in "$bin" $(/sbin/ldconfig -p | awk '/libmicrohttpd.so.12 |libcurl.so.4 /{print $NF}' | sort -u); do
	echo "$f"; ldd "$f"; done | awk '$1 ~ /^\// { print $1 } $2 == "=>" && $3 ~ /^\// { print $3 }' | sort -u)
for lib in $libs; do
	[ "$lib" = "$bin" ] && continue
	case ${lib##*/} in
	libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|libresolv.so.*|ld-linux*) ;;
	*) cp -L "$lib" "$dir/lib/" ;;
	esac
done
echo "bundle.sh: $dir: $(ls "$dir/lib" | wc -l) libraries, $(du -sh "$dir" | cut -f1)"
