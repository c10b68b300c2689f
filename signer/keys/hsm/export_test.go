//go:build cgo

package hsm

// LogoutForTest ends the token's login (C_Logout on one of its sessions: the login is the
// application's, so every session loses it), as a token restart or another application would.
func LogoutForTest(t *Token) error {
	sh, err := t.take()
	if err != nil {
		return err
	}
	defer t.put(sh)
	return t.mod.ctx.Logout(sh)
}

// CloseSessionsForTest closes every session of the token's slot behind the pool's back
// (C_CloseAllSessions), as a token that dropped its sessions would.
func CloseSessionsForTest(t *Token) error { return t.mod.ctx.CloseAllSessions(t.slot) }

// IdleSessionsForTest is the number of sessions in the pool.
func IdleSessionsForTest(t *Token) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.idle)
}
