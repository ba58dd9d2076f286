package testenv

import (
	"net"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A port FreeAddr hands out must be one no outgoing connection can take before the
// child binds it, and one the child can bind.
func TestFreeAddrIsBelowTheEphemeralRange(t *testing.T) {
	low := ephemeralLow()
	if low <= lowestPort {
		t.Skipf("this machine's ephemeral range starts at %d, leaving no room below it", low)
	}
	for range 20 {
		addr, err := FreeAddr()
		require.NoError(t, err)
		host, portText, err := net.SplitHostPort(addr)
		require.NoError(t, err)
		assert.Equal(t, "127.0.0.1", host)
		port, err := strconv.Atoi(portText)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, port, lowestPort)
		assert.Less(t, port, low, "a port in the ephemeral range can be taken by any outgoing connection")
		l, err := net.Listen("tcp", addr)
		require.NoError(t, err, "the port handed out must be bindable")
		require.NoError(t, l.Close())
	}
}
