package solanart

import (
	"context"
	"fmt"

	"github.com/stakeflow/stakeflow/harness/sandbox/npmcache"
)

// project is the embedded Node project as npmcache installs it: its dependencies installed once
// per content under the cache directory, safely from several processes at once.
func project() (npmcache.Project, error) {
	files, err := npmcache.FilesFromFS(nodeFiles, nodeDir)
	if err != nil {
		return npmcache.Project{}, fmt.Errorf("solanart: read embedded node project: %w", err)
	}
	return npmcache.Project{Name: "solanart", Files: files, Require: []string{"node_modules/litesvm/package.json"}}, nil
}

// install makes sure cacheDir holds the embedded Node project with its dependencies installed,
// and returns its directory.
func install(ctx context.Context, cacheDir string) (string, error) {
	p, err := project()
	if err != nil {
		return "", err
	}
	dir, err := npmcache.Install(ctx, cacheDir, p)
	if err != nil {
		return "", fmt.Errorf("solanart: %w", err)
	}
	return dir, nil
}
