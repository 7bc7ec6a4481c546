// The kubelet's own gRPC stack (grpc-go at the version Kubernetes 1.37
// pins) for the interop tests in tests/integration/test_grpc_go.sh and
// test_go_prepare.sh. Built from the Go module proxy with /usr/local/go.
module dralet.dev/tests/go/kubeletclient

go 1.25.0

require google.golang.org/grpc v1.82.1

require (
	golang.org/x/net v0.53.0 // indirect
	golang.org/x/sys v0.43.0 // indirect
	golang.org/x/text v0.36.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260414002931-afd174a4e478 // indirect
	google.golang.org/protobuf v1.36.11 // indirect
)
