#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""What a power loss may leave, and the next boot's start (docs/claims.md,
"Checkpoint": with the boot ID known only the checkpoint and the CDI specs are
fsynced, before their rename; no directory is, and device metadata files are
not at all). The daemon is killed (SIGKILL) with claims prepared, then the
files are put the way a power loss may leave them: the checkpoint an older
whole version or the newest, a spec file of a claim the older checkpoint does
not hold, metadata files empty, torn or missing, temporary files of
interrupted writes, in a CDI directory that is not a tmpfs (the worst case:
nothing of it was wiped). The next start, in a new boot, must leave nothing of
the old boot: no claim, no spec of ours, no metadata directory, no temporary
file, the hardware untouched; and prepare again as if new."""
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(__file__))
import claims_kubelet as ck  # noqa: E402
from claims_kubelet import uid, DRIVER  # noqa: E402

BOOTS = ["11111111-2222-4333-8444-55555555555%d" % i for i in range(3)]


def metadata_dirs(node):
    top = os.path.join(node.plugins, DRIVER, "dra-device-metadata")
    return sorted(os.listdir(top)) if os.path.isdir(top) else []


def tear(path, how):
    if how == "empty":
        open(path, "w").close()
    elif how == "torn":
        with open(path, "r+") as f:
            f.truncate(max(1, os.path.getsize(path) // 2))
    elif how == "missing":
        os.unlink(path)


def new_boot(node, boot):
    """The new boot: a new boot ID, and the fake backend's hardware state is gone."""
    node.set_boot_id(boot)
    for f in os.listdir(node.hw):
        os.unlink(os.path.join(node.hw, f))


def check_clean(node, boot):
    assert node.checkpoint_claims() == {}, node.checkpoint_claims()
    assert node.checkpoint()["data"]["bootID"] == boot
    ours = [f for f in os.listdir(node.cdi) if ck.VENDOR in f]
    assert ours == [], ours
    assert metadata_dirs(node) == [], metadata_dirs(node)
    state = os.path.join(node.plugins, DRIVER)
    stray = [f for f in os.listdir(state) if f.startswith(".checkpoint.json.")]
    assert stray == [], stray
    assert node.hardware() == {}, node.hardware()


def check(node):
    node.set_boot_id(BOOTS[0])
    node.put_claim("a", uid(1), [("r", 0)])
    node.put_claim("b", uid(2), [("r", 1)])
    node.put_claim("c", uid(3), [("r", 2), ("s", 3)])
    node.start()
    kl = node.kubelet()
    first = kl.prepare([("ns", "a", uid(1))])
    assert first[uid(1)][0] == "", first
    state = os.path.join(node.plugins, DRIVER)
    res = kl.prepare([("ns", "b", uid(2)), ("ns", "c", uid(3))])
    assert all(e == "" for e, _ in res.values()), res
    kl.close()
    assert sorted(metadata_dirs(node)) == ["ns_a", "ns_b", "ns_c"], metadata_dirs(node)
    node.kill()

    # 1. the newest checkpoint survived whole; the metadata files did not
    md = os.path.join(state, "dra-device-metadata")
    tear(os.path.join(md, "ns_a", "r", "metadata.json"), "empty")
    tear(os.path.join(md, "ns_b", "r", "metadata.json"), "torn")
    tear(os.path.join(md, "ns_c", "s", "metadata.json"), "missing")
    open(os.path.join(md, "ns_c", "r", ".metadata.json.Ab12Cd"), "w").close()
    open(os.path.join(state, ".checkpoint.json.Xy34Zw"), "w").close()
    new_boot(node, BOOTS[1])
    node.start()
    assert "node rebooted" in node.read_log(), node.read_log()[-3000:]
    check_clean(node, BOOTS[1])
    kl = node.kubelet()
    again = kl.prepare([("ns", "a", uid(1))])
    assert again[uid(1)] == first[uid(1)], (again, first)
    older = os.path.join(node.tmp, "checkpoint-older.json")
    shutil.copy(os.path.join(state, "checkpoint.json"), older)
    res = kl.prepare([("ns", "b", uid(2)), ("ns", "c", uid(3))])
    assert all(e == "" for e, _ in res.values()), res
    kl.close()
    node.kill()

    # 2. an older checkpoint (the renames after it were lost): the specs and
    # metadata of the claims it does not hold are left over too
    shutil.copy(older, os.path.join(state, "checkpoint.json"))
    assert sorted(node.checkpoint_claims()) == [uid(1)]
    assert len([f for f in os.listdir(node.cdi) if ck.VENDOR in f]) == 3
    tear(os.path.join(md, "ns_b", "r", "metadata.json"), "torn")
    new_boot(node, BOOTS[2])
    node.start()
    check_clean(node, BOOTS[2])
    kl = node.kubelet()
    assert kl.prepare([("ns", "a", uid(1))]) == first
    assert kl.unprepare([("ns", "a", uid(1))]) == {uid(1): ""}
    kl.close()
    node.stop()
    assert metadata_dirs(node) == []


if __name__ == "__main__":
    ck.run_test(check)
