package childproc

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
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
