// Package testnet holds the network helpers the module's tests share.
package testnet

import (
	"net"
	"testing"
)

// FreeLoopbackAddr returns a 127.0.0.1 address whose port no listener held a
// moment ago, for a server that takes its address from configuration: the
// receiver is built from its factory and configuration, as a collector
// builds it, and does not report the port it bound for port 0. Another
// process may take the port in between; tests accept that small chance.
func FreeLoopbackAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("finding a free port: %v", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		tb.Fatalf("finding a free port: %v", err)
	}
	return addr
}
