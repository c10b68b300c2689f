// Command schemagen writes the workflow contract's JSON Schemas into docs/schemas (run by
// `go generate ./internal/contract`).
package main

import (
	"fmt"
	"os"

	"github.com/stakeflow/stakeflow/internal/contract"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
}

func run() error {
	files, err := contract.Generate()
	if err != nil {
		return err
	}
	dir, err := contract.SchemaPath()
	if err != nil {
		return err
	}
	if err := contract.Write(dir, files); err != nil {
		return err
	}
	fmt.Printf("schemagen: %d schemas in %s\n", len(files), dir)
	return nil
}
