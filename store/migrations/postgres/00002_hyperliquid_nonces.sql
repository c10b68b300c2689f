-- +goose Up
-- The nonces the worker signed Hyperliquid actions with, per key: one operation per
-- (address, nonce), recorded before the signature.
CREATE TABLE hyperliquid_nonces (
    address   TEXT NOT NULL,
    nonce     BIGINT NOT NULL,
    operation TEXT NOT NULL,
    signed_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (address, nonce)
);

-- +goose Down
DROP TABLE hyperliquid_nonces;
