// Package testnet holds the network helpers the module's tests share.
package testnet

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// FreeLoopbackAddr returns a 127.0.0.1 address whose port no listener held a
// moment ago, for a server that takes its address from configuration: the
// receiver is built from its factory and configuration, as a collector
// builds it, and does not report the port it bound for port 0.
//
// The port is drawn below the kernel's ephemeral range
// (net.ipv4.ip_local_port_range), where neither the ports the kernel gives
// to port-0 listeners nor the local ports of outgoing connections come
// from: a port of that range, free a moment ago, could be taken by a
// parallel test's client connection before the server binds it (a CI run
// once failed so, "address already in use"). A port is handed out once per
// test binary; another process may still take it, a far smaller chance.
func FreeLoopbackAddr(tb testing.TB) string {
	tb.Helper()
	if low := ephemeralLow(); low > minDrawnPort+1000 {
		for range 200 {
			port := minDrawnPort + rand.IntN(low-minDrawnPort)
			if addr, ok := claim(port); ok {
				return addr
			}
		}
	}
	// no room below the ephemeral range, or none of it free: a port the
	// kernel picks
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

// minDrawnPort is the lowest port FreeLoopbackAddr draws, above the ports
// servers are commonly configured on.
const minDrawnPort = 20000

// handedOut are the ports this test binary's FreeLoopbackAddr returned: a
// port is free for one server only, and the tests of a package run in
// parallel.
var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// claim hands out port when it is not handed out yet and nothing listens
// on it.
func claim(port int) (string, bool) {
	handedOut.Lock()
	defer handedOut.Unlock()
	if handedOut.ports[port] {
		return "", false
	}
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return "", false
	}
	addr := l.Addr().String()
	if l.Close() != nil {
		return "", false
	}
	handedOut.ports[port] = true
	return addr, true
}

// ephemeralLow is the first port of the kernel's ephemeral range; 0 when
// it cannot be read (not Linux).
func ephemeralLow() int {
	raw, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(raw))
	if len(fields) != 2 {
		return 0
	}
	low, err := strconv.Atoi(fields[0])
	if err != nil {
		return 0
	}
	return low
}
