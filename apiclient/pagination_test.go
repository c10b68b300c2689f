package apiclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pagedServer serves n records on the three paginated endpoints, honouring
// limit (default 50) and offset, and records the offsets asked for. When
// failAt >= 0, a request with that offset gets a 500 error envelope.
type pagedServer struct {
	n, failAt  int
	totalCount bool // endpoint 8: report totalCount
	mu         sync.Mutex
	offsets    []int
}

func (p *pagedServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, offset := 50, 0
	if v := q.Get("limit"); v != "" {
		limit, _ = strconv.Atoi(v)
	}
	if v := q.Get("offset"); v != "" {
		offset, _ = strconv.Atoi(v)
	}
	p.mu.Lock()
	p.offsets = append(p.offsets, offset)
	p.mu.Unlock()
	if offset == p.failAt {
		w.WriteHeader(500)
		_, _ = w.Write([]byte(errorBody(NameDelegatorDataFailure, 115406, "server", "failure", "")))
		return
	}
	list := []map[string]any{}
	for i := offset; i < min(offset+limit, p.n); i++ {
		switch r.URL.Path {
		case "/api/v1/ethereum/data/delegator/apr":
			list = append(list, map[string]any{"stakingPeriod": strconv.Itoa(i), "rewards": []any{}})
		case "/api/v1/sui/data/network/apy":
			list = append(list, map[string]any{"stakingPeriodNumber": i})
		default:
			list = append(list, map[string]any{"id": strconv.Itoa(i)})
		}
	}
	result := map[string]any{"limit": limit, "offset": offset, "list": list,
		"startAt": "2026-10-22T00:00:00Z", "finishAt": "2026-11-22T00:00:00Z"}
	if p.totalCount {
		result["totalCount"] = p.n
	}
	b, _ := json.Marshal(map[string]any{"error": nil, "result": result})
	_, _ = w.Write(b)
}

func (p *pagedServer) asked() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]int(nil), p.offsets...)
}

func TestPagination(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name        string
		n           int
		totalCount  bool
		walk        func(c *Client) ([]string, error)
		wantOffsets []int
		wantItems   int
	}{
		{"delegator APR stops at a short page", 5, false, func(c *Client) ([]string, error) {
			return collect(c.DelegatorAPRAll(ctx, "ethereum", DelegatorAPRQuery{Address: ethAddr, Limit: 2}), func(r DelegatorRewardRecord) string { return r.StakingPeriod })
		}, []int{0, 2, 4}, 5},
		{"delegator APR stops at an empty page", 4, false, func(c *Client) ([]string, error) {
			return collect(c.DelegatorAPRAll(ctx, "ethereum", DelegatorAPRQuery{Address: ethAddr, Limit: 2}), func(r DelegatorRewardRecord) string { return r.StakingPeriod })
		}, []int{0, 2, 4}, 4},
		{"network APY uses the server's page size when limit is unset", 120, false, func(c *Client) ([]string, error) {
			return collect(c.NetworkAPYAll(ctx, "sui", NetworkAPYQuery{}), func(r NetworkAPYRecord) string { return strconv.FormatInt(r.StakingPeriodNumber, 10) })
		}, []int{0, 50, 100}, 120},
		{"network APY starts at the given offset", 7, false, func(c *Client) ([]string, error) {
			return collect(c.NetworkAPYAll(ctx, "sui", NetworkAPYQuery{Limit: 3, Offset: 2}), func(r NetworkAPYRecord) string { return strconv.FormatInt(r.StakingPeriodNumber, 10) })
		}, []int{2, 5}, 5},
		{"SSV stops at totalCount without an extra request", 4, true, func(c *Client) ([]string, error) {
			return collect(c.SSVRequestsAll(ctx, SSVRequestsQuery{Limit: 2}), func(r SetupRequest) string { return r.ID })
		}, []int{0, 2}, 4},
		{"SSV with nothing", 0, true, func(c *Client) ([]string, error) {
			return collect(c.SSVRequestsAll(ctx, SSVRequestsQuery{Limit: 2}), func(r SetupRequest) string { return r.ID })
		}, []int{0}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := &pagedServer{n: tt.n, failAt: -1, totalCount: tt.totalCount}
			srv := httptest.NewServer(ps)
			t.Cleanup(srv.Close)
			items, err := tt.walk(newTestClient(t, srv.URL))
			require.NoError(t, err)
			assert.Len(t, items, tt.wantItems)
			for i := 1; i < len(items); i++ {
				a, _ := strconv.Atoi(items[i-1])
				b, _ := strconv.Atoi(items[i])
				assert.Equal(t, a+1, b, "records in order, none repeated or skipped")
			}
			assert.Equal(t, tt.wantOffsets, ps.asked())
		})
	}
}

func collect[T any](seq func(func(T, error) bool), key func(T) string) ([]string, error) {
	var out []string
	for v, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, key(v))
	}
	return out, nil
}

// TestPaginationError: a failing page is yielded once, after the records
// already read, and the walk stops.
func TestPaginationError(t *testing.T) {
	ps := &pagedServer{n: 10, failAt: 4}
	srv := httptest.NewServer(ps)
	t.Cleanup(srv.Close)
	c := newTestClient(t, srv.URL)
	var ids []string
	var errs []error
	for r, err := range c.SSVRequestsAll(context.Background(), SSVRequestsQuery{Limit: 2}) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ids = append(ids, r.ID)
	}
	assert.Equal(t, []string{"0", "1", "2", "3"}, ids)
	require.Len(t, errs, 1)
	assert.True(t, IsDelegatorDataFailure(errs[0]))
	assert.Equal(t, []int{0, 2, 4}, ps.asked())
}

// TestPaginationArgumentError: an invalid query fails before any request.
func TestPaginationArgumentError(t *testing.T) {
	ps := &pagedServer{n: 10, failAt: -1}
	srv := httptest.NewServer(ps)
	t.Cleanup(srv.Close)
	c := newTestClient(t, srv.URL)
	_, err := collect(c.SSVRequestsAll(context.Background(), SSVRequestsQuery{Limit: 2000}), func(r SetupRequest) string { return r.ID })
	assert.True(t, IsArgument(err))
	assert.Empty(t, ps.asked())
}

// TestPaginationEarlyBreak: stopping the loop stops the requests.
func TestPaginationEarlyBreak(t *testing.T) {
	ps := &pagedServer{n: 100, failAt: -1}
	srv := httptest.NewServer(ps)
	t.Cleanup(srv.Close)
	c := newTestClient(t, srv.URL)
	n := 0
	for _, err := range c.DelegatorAPRAll(context.Background(), "ethereum", DelegatorAPRQuery{Address: ethAddr, Limit: 10}) {
		require.NoError(t, err)
		n++
		if n == 15 {
			break
		}
	}
	assert.Equal(t, []int{0, 10}, ps.asked())
}

// TestPaginationOffsetCeiling: a walk that would pass the service's offset
// limit ends with an error instead of an invalid request.
func TestPaginationOffsetCeiling(t *testing.T) {
	ps := &pagedServer{n: MaxSSVOffset + 1000, failAt: -1}
	srv := httptest.NewServer(ps)
	t.Cleanup(srv.Close)
	c := newTestClient(t, srv.URL)
	var last error
	count := 0
	for _, err := range c.SSVRequestsAll(context.Background(), SSVRequestsQuery{Limit: 1000, Offset: MaxSSVOffset - 1000}) {
		if err != nil {
			last = err
			continue
		}
		count++
	}
	assert.Equal(t, 2000, count)
	require.Error(t, last)
	assert.Contains(t, last.Error(), fmt.Sprint(MaxSSVOffset))
	assert.Equal(t, []int{MaxSSVOffset - 1000, MaxSSVOffset}, ps.asked())
}
