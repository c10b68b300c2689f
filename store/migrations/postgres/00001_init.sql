-- +goose Up
-- Decimals are NUMERIC (exact, scale kept as sent); times are UTC instants; NULL is "unknown".
CREATE TABLE network_apy (
    network       TEXT NOT NULL,
    period        BIGINT NOT NULL,
    period_start  TIMESTAMPTZ,
    period_end    TIMESTAMPTZ,
    updated_at    TIMESTAMPTZ,
    network_apy   NUMERIC,
    consensus_apy NUMERIC,
    execution_apy NUMERIC,
    PRIMARY KEY (network, period)
);
CREATE INDEX network_apy_start ON network_apy (network, period_start);

CREATE TABLE delegator_rewards (
    network       TEXT NOT NULL,
    address       TEXT NOT NULL,
    period        TEXT NOT NULL,
    type          TEXT NOT NULL,
    validator     TEXT NOT NULL,
    currency      TEXT NOT NULL,
    recipient     TEXT NOT NULL,
    amount        NUMERIC,
    net_amount    NUMERIC,
    fee           NUMERIC,
    period_start  TIMESTAMPTZ,
    period_end    TIMESTAMPTZ,
    not_finalized BOOLEAN NOT NULL,
    PRIMARY KEY (network, address, period, type)
);
CREATE INDEX delegator_rewards_start ON delegator_rewards (network, address, period_start);

CREATE TABLE ssv_requests (
    id                    TEXT PRIMARY KEY,
    status                TEXT NOT NULL,
    validators_count      INTEGER NOT NULL,
    amount_per_validator  NUMERIC,
    type                  TEXT NOT NULL,
    ssv_owner_address     TEXT NOT NULL,
    withdrawal_address    TEXT NOT NULL,
    fee_recipient_address TEXT NOT NULL,
    updated_at            TIMESTAMPTZ
);
CREATE INDEX ssv_requests_status ON ssv_requests (status);

CREATE TABLE ssv_events (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    request_id  TEXT NOT NULL REFERENCES ssv_requests (id),
    from_status TEXT NOT NULL,
    to_status   TEXT NOT NULL,
    at          TIMESTAMPTZ NOT NULL
);
CREATE INDEX ssv_events_request ON ssv_events (request_id, id);

-- +goose Down
DROP TABLE ssv_events;
DROP TABLE ssv_requests;
DROP TABLE delegator_rewards;
DROP TABLE network_apy;
