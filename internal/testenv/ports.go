package testenv

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// lowestPort is where FreeAddr starts looking: above the ports services commonly
// listen on, so that a port it hands out is rarely one a system daemon wants.
const lowestPort = 10000

// ephemeralRangePath is the kernel's range for the local ports of outgoing
// connections and of listeners on port 0.
const ephemeralRangePath = "/proc/sys/net/ipv4/ip_local_port_range"

// FreeAddr is a loopback address with a port free at the time of the call. A child
// binds it later, so the port is drawn at random below the kernel's ephemeral range:
// a port inside that range can be taken in between by any outgoing connection on the
// machine, and the test suites run side by side open thousands of them.
func FreeAddr() (string, error) {
	port, err := freeLoopbackPort()
	if err != nil {
		return "", err
	}
	return "127.0.0.1:" + strconv.Itoa(port), nil
}

func freeLoopbackPort() (int, error) {
	highest := ephemeralLow() - 1
	if highest <= lowestPort {
		return kernelChosenPort()
	}
	var lastErr error
	for range 100 {
		port := lowestPort + rand.IntN(highest-lowestPort+1)
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			lastErr = err
			continue
		}
		_ = l.Close()
		return port, nil
	}
	return 0, fmt.Errorf("find a free port below the ephemeral range: %w", lastErr)
}

// ephemeralLow is the lowest ephemeral port; Linux's default when the kernel does not
// say, which is also below what other systems use.
func ephemeralLow() int {
	const linuxDefault = 32768
	data, err := os.ReadFile(ephemeralRangePath)
	if err != nil {
		return linuxDefault
	}
	fields := strings.Fields(string(data))
	if len(fields) != 2 {
		return linuxDefault
	}
	low, err := strconv.Atoi(fields[0])
	if err != nil {
		return linuxDefault
	}
	return low
}

// kernelChosenPort is the fallback on a machine whose ephemeral range starts too low
// to leave room below it.
func kernelChosenPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
