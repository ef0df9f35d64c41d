package testnet

import (
	"net"
	"strconv"
	"testing"
)

// TestFreeLoopbackAddr: the addresses are loopback, distinct, bindable,
// and below the kernel's ephemeral range when it leaves room there.
func TestFreeLoopbackAddr(t *testing.T) {
	low := ephemeralLow()
	seen := map[string]bool{}
	for range 50 {
		addr := FreeLoopbackAddr(t)
		if seen[addr] {
			t.Fatalf("%s handed out twice", addr)
		}
		seen[addr] = true
		host, portText, err := net.SplitHostPort(addr)
		if err != nil || host != "127.0.0.1" {
			t.Fatalf("%q: not a loopback address (%v)", addr, err)
		}
		port, _ := strconv.Atoi(portText)
		if low > minDrawnPort+1000 && (port < minDrawnPort || port >= low) {
			t.Fatalf("port %d not in [%d, %d)", port, minDrawnPort, low)
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("%s: %v", addr, err)
		}
		l.Close()
	}
}
