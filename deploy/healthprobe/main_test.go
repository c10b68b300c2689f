package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRun(t *testing.T) {
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	mux.HandleFunc("/unready", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "worker not started", http.StatusServiceUnavailable)
	})
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })
	mux.HandleFunc("/hang", func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs before srv.Close

	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "2xx passes", args: []string{srv.URL + "/ok"}},
		{name: "every URL must pass", args: []string{srv.URL + "/ok", srv.URL + "/unready"}, wantErr: "/unready: status 503"},
		{name: "503 fails", args: []string{srv.URL + "/unready"}, wantErr: "status 503 Service Unavailable"},
		{name: "404 fails", args: []string{srv.URL + "/nothing"}, wantErr: "status 404"},
		{name: "redirect is not followed", args: []string{srv.URL + "/moved"}, wantErr: "status 302"},
		{name: "timeout fails", args: []string{"-timeout", "50ms", srv.URL + "/hang"}, wantErr: "context deadline exceeded"},
		{name: "refused connection fails", args: []string{"http://127.0.0.1:1/healthz"}, wantErr: "127.0.0.1:1/healthz"},
		{name: "no URL", args: nil, wantErr: "no URL given"},
		{name: "bad flag", args: []string{"-nope"}, wantErr: "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := run(tt.args, io.Discard)
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
}
