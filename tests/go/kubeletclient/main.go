// SPDX-License-Identifier: Apache-2.0

// kubeletclient behaves like the kubelet's plugin watcher against a DRA
// driver's registration socket, using grpc-go (the kubelet's own stack, at the
// version Kubernetes 1.37 pins; see go.mod): GetInfo with a 1 s
// deadline, then NotifyRegistrationStatus with a 5 s deadline. Messages are
// marshalled by hand (raw codec), so no generated Go code is needed.
//
//	kubeletclient -socket REG.sock [-reject "reason"] [-expect-driver NAME]
//	              [-dra-echo] [-big N] [-prepare NAMESPACE/NAME/UID]
//
// -prepare calls NodePrepareResources and NodeUnprepareResources (dra v1,
// 45 s deadline like the kubelet) on the DRA endpoint for that claim and
// checks the answers (one entry for the UID, no error, devices with CDI IDs).
//
// Prints one line per step and exits non-zero on the first failure.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/status"
)

// rawCodec passes []byte messages through unchanged.
type rawCodec struct{}

func (rawCodec) Marshal(v interface{}) ([]byte, error) {
	b, ok := v.(*[]byte)
	if !ok {
		return nil, fmt.Errorf("raw codec: %T", v)
	}
	return *b, nil
}

func (rawCodec) Unmarshal(data []byte, v interface{}) error {
	b, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("raw codec: %T", v)
	}
	*b = append((*b)[:0], data...)
	return nil
}

func (rawCodec) Name() string { return "raw" }

func init() { encoding.RegisterCodec(rawCodec{}) }

// ---- minimal protobuf wire format ----

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func appendString(b []byte, field int, s string) []byte {
	b = appendVarint(b, uint64(field)<<3|2)
	b = appendVarint(b, uint64(len(s)))
	return append(b, s...)
}

func readVarint(b []byte) (uint64, int, error) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		v |= uint64(b[i]&0x7f) << (7 * uint(i))
		if b[i] < 0x80 {
			return v, i + 1, nil
		}
	}
	return 0, 0, errors.New("bad varint")
}

// parseStrings returns the length-delimited fields of a message by number.
func parseStrings(b []byte) (map[int][]string, error) {
	out := map[int][]string{}
	for len(b) > 0 {
		key, n, err := readVarint(b)
		if err != nil {
			return nil, err
		}
		b = b[n:]
		field, wt := int(key>>3), key&7
		switch wt {
		case 0:
			_, n, err = readVarint(b)
			if err != nil {
				return nil, err
			}
			b = b[n:]
		case 2:
			l, n, err := readVarint(b)
			if err != nil || uint64(len(b)-n) < l {
				return nil, errors.New("bad length")
			}
			out[field] = append(out[field], string(b[n:n+int(l)]))
			b = b[n+int(l):]
		default:
			return nil, fmt.Errorf("unexpected wire type %d", wt)
		}
	}
	return out, nil
}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "FAIL: "+format+"\n", args...)
	os.Exit(1)
}

// dial the way the kubelet's plugin watcher does: bare path, custom unix dialer.
func dial(path string) *grpc.ClientConn {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := grpc.DialContext(ctx, path, grpc.WithInsecure(), grpc.WithBlock(),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", addr)
		}),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{})))
	if err != nil {
		fail("dial %s: %v", path, err)
	}
	return conn
}

func call(conn *grpc.ClientConn, method string, req []byte, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var resp []byte
	err := conn.Invoke(ctx, method, &req, &resp)
	return resp, err
}

func main() {
	socket := flag.String("socket", "", "registration socket")
	reject := flag.String("reject", "", "send NotifyRegistrationStatus(false, reason)")
	expect := flag.String("expect-driver", "", "expected PluginInfo.name")
	draEcho := flag.Bool("dra-echo", false, "call the test Echo method on the DRA endpoint")
	big := flag.Int("big", 0, "echo a message of N bytes on the DRA endpoint")
	prepare := flag.String("prepare", "", "prepare and unprepare the claim NAMESPACE/NAME/UID")
	flag.Parse()
	if *socket == "" {
		fail("-socket is required")
	}

	conn := dial(*socket)
	defer conn.Close()

	start := time.Now()
	resp, err := call(conn, "/pluginregistration.Registration/GetInfo", []byte{}, time.Second)
	if err != nil {
		fail("GetInfo: %v", err)
	}
	fields, err := parseStrings(resp)
	if err != nil {
		fail("PluginInfo: %v", err)
	}
	first := func(n int) string {
		if len(fields[n]) == 0 {
			return ""
		}
		return fields[n][0]
	}
	fmt.Printf("GetInfo: type=%s name=%s endpoint=%s versions=%s (%v)\n", first(1), first(2),
		first(3), strings.Join(fields[4], ","), time.Since(start))
	if first(1) != "DRAPlugin" {
		fail("type %q", first(1))
	}
	if *expect != "" && first(2) != *expect {
		fail("name %q, want %q", first(2), *expect)
	}
	if len(fields[4]) < 2 || fields[4][0] != "v1.DRAPlugin" || fields[4][1] != "v1beta1.DRAPlugin" {
		fail("supported_versions %v", fields[4])
	}
	endpoint := first(3)
	if !strings.HasPrefix(endpoint, "/") {
		fail("endpoint %q is not absolute", endpoint)
	}

	var st []byte
	if *reject == "" {
		st = appendVarint(appendVarint(nil, 1<<3|0), 1)
	} else {
		st = appendString(nil, 2, *reject)
	}
	_, err = call(conn, "/pluginregistration.Registration/NotifyRegistrationStatus", st, 5*time.Second)
	if *reject == "" {
		if err != nil {
			fail("NotifyRegistrationStatus(true): %v", err)
		}
		fmt.Println("NotifyRegistrationStatus(true): ok")
	} else {
		s, _ := status.FromError(err)
		if err == nil || s.Code() != codes.Unknown || !strings.Contains(s.Message(), *reject) {
			fail("NotifyRegistrationStatus(false): want an error with %q, got %v", *reject, err)
		}
		fmt.Printf("NotifyRegistrationStatus(false): %v\n", s.Code())
	}

	_, err = call(conn, "/pluginregistration.Registration/NoSuchMethod", []byte{}, time.Second)
	if s, _ := status.FromError(err); s.Code() != codes.Unimplemented {
		fail("unknown method: want Unimplemented, got %v", err)
	}
	fmt.Println("unknown method: Unimplemented")

	if *prepare != "" {
		prepareRoundTrip(endpoint, *prepare)
	}

	if *draEcho || *big > 0 {
		// The kubelet dials the DRA endpoint as "unix:" + endpoint.
		dra, err := grpc.Dial("unix:"+endpoint, grpc.WithInsecure(),
			grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{})))
		if err != nil {
			fail("dial DRA endpoint: %v", err)
		}
		defer dra.Close()
		msg := []byte("hello from grpc-go")
		if *big > 0 {
			msg = make([]byte, *big)
			for i := range msg {
				msg[i] = byte(i * 13)
			}
		}
		resp, err := call(dra, "/dralet.test.Test/Echo", msg, 45*time.Second)
		if err != nil {
			fail("Echo: %v", err)
		}
		if string(resp) != string(msg) {
			fail("Echo: %d bytes back, want %d", len(resp), len(msg))
		}
		fmt.Printf("Echo over unix:%s: %d bytes ok\n", endpoint, len(resp))
	}
}

// claimMessage encodes Claim{namespace = 1, uid = 2, name = 3}.
func claimMessage(ns, name, uid string) []byte {
	return appendString(appendString(appendString(nil, 1, ns), 2, uid), 3, name)
}

// claimEntry returns the value of the response's map entry for @uid
// (claims = 1 is a map<string, …>: entries {key = 1, value = 2}).
func claimEntry(resp []byte, uid string) map[int][]string {
	top, err := parseStrings(resp)
	if err != nil {
		fail("response: %v", err)
	}
	if len(top[1]) != 1 {
		fail("want one claim entry, got %d", len(top[1]))
	}
	entry, err := parseStrings([]byte(top[1][0]))
	if err != nil || len(entry[1]) != 1 || entry[1][0] != uid {
		fail("claim entry keyed %v, want %q (%v)", entry[1], uid, err)
	}
	value := map[int][]string{}
	if len(entry[2]) == 1 {
		if value, err = parseStrings([]byte(entry[2][0])); err != nil {
			fail("claim entry value: %v", err)
		}
	}
	return value
}

func prepareRoundTrip(endpoint, claim string) {
	parts := strings.SplitN(claim, "/", 3)
	if len(parts) != 3 {
		fail("-prepare wants NAMESPACE/NAME/UID, got %q", claim)
	}
	dra, err := grpc.Dial("unix:"+endpoint, grpc.WithInsecure(),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{})))
	if err != nil {
		fail("dial DRA endpoint: %v", err)
	}
	defer dra.Close()
	req := appendVarint(nil, 1<<3|2)
	c := claimMessage(parts[0], parts[1], parts[2])
	req = append(appendVarint(req, uint64(len(c))), c...)

	resp, err := call(dra, "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources", req,
		45*time.Second)
	if err != nil {
		fail("NodePrepareResources: %v", err)
	}
	value := claimEntry(resp, parts[2])
	if len(value[2]) > 0 && value[2][0] != "" {
		fail("NodePrepareResources: claim error %q", value[2][0])
	}
	if len(value[1]) == 0 {
		fail("NodePrepareResources: no devices")
	}
	for _, d := range value[1] {
		dev, err := parseStrings([]byte(d))
		if err != nil || len(dev[2]) != 1 || len(dev[3]) != 1 || len(dev[4]) == 0 {
			fail("NodePrepareResources: device %v lacks pool, name or CDI IDs (%v)", dev, err)
		}
		fmt.Printf("NodePrepareResources: %s/%s requests=%s cdi=%s\n", dev[2][0], dev[3][0],
			strings.Join(dev[1], ","), strings.Join(dev[4], ","))
	}

	resp, err = call(dra, "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources", req,
		45*time.Second)
	if err != nil {
		fail("NodeUnprepareResources: %v", err)
	}
	value = claimEntry(resp, parts[2])
	if len(value[1]) > 0 && value[1][0] != "" {
		fail("NodeUnprepareResources: claim error %q", value[1][0])
	}
	fmt.Println("NodeUnprepareResources: ok")
}
