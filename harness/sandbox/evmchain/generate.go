package evmchain

//go:generate go run ./internal/regen
