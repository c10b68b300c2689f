//go:build integration

package solanart

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wsClient is a minimal websocket (RFC 6455) JSON-RPC client, enough to drive the runtime's
// subscriptions from Go without a websocket dependency: text frames, masked as a client must,
// no fragmentation.
type wsClient struct {
	t       *testing.T
	conn    net.Conn
	br      *bufio.Reader
	nextID  int
	pending []wsMessage // notifications read while waiting for an answer
}

// wsMessage is one JSON-RPC message from the server: an answer or a notification.
type wsMessage struct {
	ID     *int            `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Method string `json:"method"`
	Params struct {
		Result       json.RawMessage `json:"result"`
		Subscription int             `json:"subscription"`
	} `json:"params"`
}

// dialWS opens a websocket on the runtime's HTTP URL (its one port).
func dialWS(t *testing.T, ctx context.Context, httpURL string) *wsClient {
	t.Helper()
	u, err := url.Parse(httpURL)
	require.NoError(t, err)
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", u.Host)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce)
	key := base64.StdEncoding.EncodeToString(nonce)
	_, err = fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n", u.Host, key)
	require.NoError(t, err)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode, "websocket upgrade")
	accept := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	require.Equal(t, base64.StdEncoding.EncodeToString(accept[:]), resp.Header.Get("Sec-WebSocket-Accept"))
	return &wsClient{t: t, conn: conn, br: br}
}

func (c *wsClient) writeText(payload []byte) {
	c.t.Helper()
	frame := []byte{0x81} // FIN, text
	switch n := len(payload); {
	case n < 126:
		frame = append(frame, 0x80|byte(n))
	case n < 1<<16:
		frame = append(frame, 0x80|126, byte(n>>8), byte(n))
	default:
		frame = append(frame, 0x80|127)
		frame = binary.BigEndian.AppendUint64(frame, uint64(n))
	}
	mask := make([]byte, 4)
	_, _ = rand.Read(mask)
	frame = append(frame, mask...)
	for i, b := range payload {
		frame = append(frame, b^mask[i%4])
	}
	_, err := c.conn.Write(frame)
	require.NoError(c.t, err)
}

// read returns the next text message, failing the test after timeout.
func (c *wsClient) read(timeout time.Duration) wsMessage {
	c.t.Helper()
	require.NoError(c.t, c.conn.SetReadDeadline(time.Now().Add(timeout)))
	for {
		var h [2]byte
		_, err := io.ReadFull(c.br, h[:])
		require.NoError(c.t, err, "websocket read")
		n := uint64(h[1] & 0x7f)
		switch n {
		case 126:
			var b [2]byte
			_, err = io.ReadFull(c.br, b[:])
			n = uint64(binary.BigEndian.Uint16(b[:]))
		case 127:
			var b [8]byte
			_, err = io.ReadFull(c.br, b[:])
			n = binary.BigEndian.Uint64(b[:])
		}
		require.NoError(c.t, err)
		require.Zero(c.t, h[1]&0x80, "the server masked a frame")
		payload := make([]byte, n)
		_, err = io.ReadFull(c.br, payload)
		require.NoError(c.t, err)
		switch op := h[0] & 0x0f; op {
		case 0x1:
			var m wsMessage
			require.NoError(c.t, json.Unmarshal(payload, &m), "%s", payload)
			return m
		case 0x9, 0xa: // ping, pong: the runtime sends none; skip
		default:
			require.Failf(c.t, "unexpected websocket frame", "opcode %#x: %q", op, payload)
		}
	}
}

// call sends one request and returns its answer; notifications read meanwhile are kept.
func (c *wsClient) call(method string, params ...any) wsMessage {
	c.t.Helper()
	c.nextID++
	id := c.nextID
	if params == nil {
		params = []any{}
	}
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	require.NoError(c.t, err)
	c.writeText(b)
	for {
		m := c.read(waitFor)
		if m.ID == nil {
			c.pending = append(c.pending, m)
			continue
		}
		require.Equal(c.t, id, *m.ID)
		return m
	}
}

// subscribe calls method and returns the subscription id it answers.
func (c *wsClient) subscribe(method string, params ...any) int {
	c.t.Helper()
	m := c.call(method, params...)
	require.Nil(c.t, m.Error, "%s: %+v", method, m.Error)
	var id int
	require.NoError(c.t, json.Unmarshal(m.Result, &id), "%s answered %s", method, m.Result)
	return id
}

// notification returns the next notification, kept or read.
func (c *wsClient) notification(timeout time.Duration) wsMessage {
	c.t.Helper()
	if len(c.pending) > 0 {
		m := c.pending[0]
		c.pending = c.pending[1:]
		return m
	}
	m := c.read(timeout)
	require.Nil(c.t, m.ID, "an answer nobody asked for: %+v", m)
	return m
}

// requireUnsubscribe asserts that method answers true for id.
func (c *wsClient) requireUnsubscribe(method string, id int) {
	c.t.Helper()
	m := c.call(method, id)
	require.Nil(c.t, m.Error, "%s %d: %+v", method, id, m.Error)
	assert.JSONEq(c.t, "true", string(m.Result), "%s %d", method, id)
}

// requireNoSubscription asserts that method refuses id as Agave does.
func (c *wsClient) requireNoSubscription(method string, id int) {
	c.t.Helper()
	m := c.call(method, id)
	require.NotNil(c.t, m.Error, "%s %d answered %s", method, id, m.Result)
	assert.Equal(c.t, -32602, m.Error.Code)
	assert.Equal(c.t, "Invalid subscription id.", m.Error.Message)
}

type signatureNotification struct {
	Context struct {
		Slot uint64 `json:"slot"`
	} `json:"context"`
	Value json.RawMessage `json:"value"`
}

func decodeSignatureNotification(t *testing.T, m wsMessage) signatureNotification {
	t.Helper()
	require.Equal(t, "signatureNotification", m.Method)
	var n signatureNotification
	require.NoError(t, json.Unmarshal(m.Params.Result, &n), "%s", m.Params.Result)
	return n
}

// TestWebsocketSubscriptions drives the runtime's PubSub API over a websocket on its HTTP port:
// slotSubscribe is notified as the slot clock moves and signatureSubscribe when the signature
// reaches the commitment asked for, both with no HTTP request arriving meanwhile (the runtime's
// clock is lazy: only its subscription timer moves it then); a signature subscription is gone
// once notified; unsubscribes answer true once, then "Invalid subscription id.".
func TestWebsocketSubscriptions(t *testing.T) {
	const depth = 8
	r := startRuntime(t, Options{FinalizationDepth: depth})
	ctx := testContext(t)
	c := r.RPC()

	// Over HTTP the subscribe methods do not exist, as on Solana; over the websocket only they do.
	var res json.RawMessage
	err := r.call(ctx, &res, "signatureSubscribe", solana.Signature{}.String(), map[string]string{"commitment": "confirmed"})
	assert.ErrorContains(t, err, "Method not found", "signatureSubscribe over HTTP")
	ws := dialWS(t, ctx, r.URL())
	m := ws.call("getSlot")
	require.NotNil(t, m.Error)
	assert.Equal(t, -32601, m.Error.Code)
	m = ws.call("signatureSubscribe", "not-a-signature", map[string]string{"commitment": "confirmed"})
	require.NotNil(t, m.Error)
	assert.Equal(t, -32602, m.Error.Code)

	t.Run("slot", func(t *testing.T) {
		start, err := c.GetSlot(ctx, rpc.CommitmentConfirmed)
		require.NoError(t, err)
		id := ws.subscribe("slotSubscribe")
		last := start
		for range 3 { // no HTTP request from here: the timer moves the clock
			m := ws.notification(waitFor)
			require.Equal(t, "slotNotification", m.Method)
			require.Equal(t, id, m.Params.Subscription)
			var n struct{ Parent, Root, Slot uint64 }
			require.NoError(t, json.Unmarshal(m.Params.Result, &n))
			assert.Greater(t, n.Slot, last)
			assert.Equal(t, n.Slot-1, n.Parent)
			last = n.Slot
		}
		ws.requireUnsubscribe("slotUnsubscribe", id)
		ws.requireNoSubscription("slotUnsubscribe", id)
		ws.requireNoSubscription("signatureUnsubscribe", id)
		ws.pending = nil // slot notifications sent before the unsubscribe was read
	})

	t.Run("signature", func(t *testing.T) {
		payer := fundedWallet(t, ctx, r, solana.LAMPORTS_PER_SOL)
		tx := buildTx(t, ctx, c, payer, transfer(payer, solana.NewWallet().PublicKey(), 10_000_000))
		sig := tx.Signatures[0]

		// Subscribed before the transaction is sent.
		confirmed := ws.subscribe("signatureSubscribe", sig.String(), map[string]any{"commitment": "confirmed"})
		finalized := ws.subscribe("signatureSubscribe", sig.String(), map[string]any{"commitment": "finalized"})
		received := ws.subscribe("signatureSubscribe", sig.String(), map[string]any{"commitment": "processed", "enableReceivedNotification": true})
		never := ws.subscribe("signatureSubscribe", solana.Signature{1}.String(), map[string]any{"commitment": "confirmed"})
		ws.requireUnsubscribe("signatureUnsubscribe", never)
		ws.requireNoSubscription("signatureUnsubscribe", never)
		require.Empty(t, ws.pending, "notified before the transaction was sent")

		// Another connection cannot end this one's subscriptions.
		other := dialWS(t, ctx, r.URL())
		other.requireNoSubscription("signatureUnsubscribe", confirmed)

		_, err := c.SendTransactionWithOpts(ctx, tx, rpc.TransactionOpts{PreflightCommitment: rpc.CommitmentConfirmed})
		require.NoError(t, err)
		st, err := c.GetSignatureStatuses(ctx, false, sig)
		require.NoError(t, err)
		require.NotNil(t, st.Value[0])
		landed := st.Value[0].Slot

		// Landing notifies confirmed and processed (after "receivedSignature"), not finalized.
		got := map[int][]string{}
		for range 3 {
			m := ws.notification(waitFor)
			n := decodeSignatureNotification(t, m)
			assert.GreaterOrEqual(t, n.Context.Slot, landed)
			assert.Less(t, n.Context.Slot, landed+depth, "a landing notification came late")
			got[m.Params.Subscription] = append(got[m.Params.Subscription], string(n.Value))
		}
		assert.Equal(t, map[int][]string{
			confirmed: {`{"err":null}`},
			received:  {`"receivedSignature"`, `{"err":null}`},
		}, got)

		// Finalized FinalizationDepth slots later, with no HTTP request meanwhile.
		m := ws.notification(waitFor)
		assert.Equal(t, finalized, m.Params.Subscription)
		n := decodeSignatureNotification(t, m)
		assert.GreaterOrEqual(t, n.Context.Slot, landed+depth)
		assert.JSONEq(t, `{"err":null}`, string(n.Value))

		// Each subscription ended with its notification.
		for _, id := range []int{confirmed, finalized, received} {
			ws.requireNoSubscription("signatureUnsubscribe", id)
		}

		// A signature already finalized is notified at once.
		again := ws.subscribe("signatureSubscribe", sig.String(), map[string]any{"commitment": "finalized"})
		m = ws.notification(waitFor)
		assert.Equal(t, again, m.Params.Subscription)
		assert.JSONEq(t, `{"err":null}`, string(decodeSignatureNotification(t, m).Value))
		ws.requireNoSubscription("signatureUnsubscribe", again)
		assert.Empty(t, ws.pending)
	})
}
