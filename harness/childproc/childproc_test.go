package childproc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTailKeepsTheLastLines(t *testing.T) {
	tail := NewTail(3, " | ")
	assert.Equal(t, "", tail.String())
	var wg sync.WaitGroup
	for i := range 5 {
		tail.Add(fmt.Sprint("line ", i))
	}
	for range 4 {
		wg.Go(func() { tail.Add("x"); _ = tail.String() })
	}
	wg.Wait()
	assert.Equal(t, "x | x | x", tail.String())
	tail = NewTail(2, "\n")
	tail.Add("a")
	tail.Add("b")
	tail.Add("c")
	assert.Equal(t, "b\nc", tail.String())
}

func TestWaitReady(t *testing.T) {
	ctx := context.Background()
	calls := 0
	err := WaitReady(ctx, time.Minute, time.Second, "node", nil, func(context.Context) error {
		if calls++; calls < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, 3, calls, "probed until it succeeded")

	err = WaitReady(ctx, 250*time.Millisecond, time.Second, "node", nil, func(context.Context) error { return errors.New("port closed") })
	require.ErrorContains(t, err, "node not ready after 250ms: port closed")

	exited := make(chan struct{})
	close(exited)
	err = WaitReady(ctx, time.Minute, time.Second, "node", exited, func(context.Context) error { return errors.New("port closed") })
	require.ErrorContains(t, err, "node: the process exited before it was ready")
}

// The socket ListenInheritable hands over is bound at the address it names, and still listening
// once its own listener is closed: a child given the file accepts a connection to that address.
func TestListenInheritableHandsOverABoundSocket(t *testing.T) {
	f, addr, err := ListenInheritable()
	require.NoError(t, err)
	defer f.Close()
	ln, err := net.FileListener(f) // what the child does with its descriptor
	require.NoError(t, err)
	defer ln.Close()
	assert.Equal(t, addr, ln.Addr().String())
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	got, err := ln.Accept()
	require.NoError(t, err)
	_ = got.Close()
}
