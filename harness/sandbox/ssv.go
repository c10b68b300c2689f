package sandbox

import (
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"sync"

	"go.uber.org/zap"
)

// SSV set-up request statuses the sandbox names; SetSSVStatus takes any status of the same form
// (lower case, digits, '-' or '_'), since the interface does not list them.
const (
	SSVStatusProcessing = "processing"
	SSVStatusCompleted  = "completed"
	SSVStatusFailed     = "failed"
)

var (
	ssvStatusForm = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,39}$`)
	uuidForm      = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
)

// ssvStatuses holds the statuses set-up requests were moved to, by request ID.
type ssvStatuses struct {
	mu sync.Mutex
	m  map[string]string
}

func (s *ssvStatuses) set(id, status string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]string{}
	}
	s.m[id] = status
}

func (s *ssvStatuses) get() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.m)
}

// apply replaces the status of each request that was moved.
func (s *ssvStatuses) apply(reqs []ssvRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range reqs {
		if st, ok := s.m[reqs[i].ID]; ok {
			reqs[i].Status = st
		}
	}
}

// checkSSVStatus checks a request ID (a UUID, lower case) and a status.
func checkSSVStatus(id, status string) *apiError {
	if !uuidForm.MatchString(id) {
		return invalidField("id", "isUuid", "id must be a set-up request's UUID in lower case")
	}
	if !ssvStatusForm.MatchString(status) {
		return invalidField("status", "matches", "status must be lower case letters, digits, '-' or '_' (e.g. %s, %s, %s)",
			SSVStatusProcessing, SSVStatusCompleted, SSVStatusFailed)
	}
	return nil
}

// SetSSVStatus moves the set-up request id (of any token subject) to status: endpoint 8 answers
// it with that status from now on. An ID that is not a UUID, or a status not of the form above,
// is refused.
func (s *Sandbox) SetSSVStatus(id, status string) error {
	if aerr := checkSSVStatus(id, status); aerr != nil {
		return fmt.Errorf("sandbox: %s", aerr.Message)
	}
	s.srv.ssv.set(id, status)
	return nil
}

// ssvControlRoutes adds GET and POST /sandbox/ssv/status.
func (s *server) ssvControlRoutes(mux *http.ServeMux) {
	mux.Handle("GET /sandbox/ssv/status", s.wrapPlain(func(*http.Request, *reqContext) (any, *apiError) {
		m := s.ssv.get()
		if m == nil {
			m = map[string]string{}
		}
		return m, nil
	}))
	mux.Handle("POST /sandbox/ssv/status", s.wrapPlain(func(r *http.Request, _ *reqContext) (any, *apiError) {
		var body struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		}
		if err := decodeStrict(r, &body); err != nil {
			return nil, invalidField("body", "isJson", "body must be {\"id\", \"status\"}: %v", err)
		}
		if aerr := checkSSVStatus(body.ID, body.Status); aerr != nil {
			return nil, aerr
		}
		s.ssv.set(body.ID, body.Status)
		s.log.Info("SSV set-up request moved", zap.String("id", body.ID), zap.String("status", body.Status))
		return map[string]string{"id": body.ID, "status": body.Status}, nil
	}))
}
