package worker

import (
	"fmt"
	"strings"

	"github.com/stakeflow/stakeflow/activities/notify"

	"github.com/stakeflow/stakeflow/secretfile"
)

// newNotifier builds the notifier of the configuration: none posts without --notify-webhook. The
// secret file must be readable by its owner alone, like a key; no error quotes its content.
func newNotifier(cfg Config) (*notify.Notifier, error) {
	n := &notify.Notifier{URL: cfg.NotifyWebhook, Format: cfg.NotifyFormat}
	if cfg.NotifyWebhookSecretFile == "" {
		return n, nil
	}
	b, err := secretfile.Read(cfg.NotifyWebhookSecretFile)
	if err != nil {
		return nil, fmt.Errorf("--notify-webhook-secret-file: %w", err)
	}
	secret := strings.TrimSpace(string(b))
	if secret == "" {
		return nil, fmt.Errorf("--notify-webhook-secret-file %s is empty", cfg.NotifyWebhookSecretFile)
	}
	n.Secret = []byte(secret)
	return n, nil
}
