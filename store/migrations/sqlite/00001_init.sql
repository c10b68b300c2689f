-- +goose Up
-- Decimals are TEXT (exact, as sent); times are UTC text of one fixed width
-- (2006-01-02T15:04:05.000000Z), so text order is time order; NULL is "unknown".
CREATE TABLE network_apy (
    network       TEXT NOT NULL,
    period        INTEGER NOT NULL,
    period_start  TEXT,
    period_end    TEXT,
    updated_at    TEXT,
    network_apy   TEXT,
    consensus_apy TEXT,
    execution_apy TEXT,
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
    amount        TEXT,
    net_amount    TEXT,
    fee           TEXT,
    period_start  TEXT,
    period_end    TEXT,
    not_finalized INTEGER NOT NULL,
    PRIMARY KEY (network, address, period, type)
);
CREATE INDEX delegator_rewards_start ON delegator_rewards (network, address, period_start);

CREATE TABLE ssv_requests (
    id                    TEXT PRIMARY KEY,
    status                TEXT NOT NULL,
    validators_count      INTEGER NOT NULL,
    amount_per_validator  TEXT,
    type                  TEXT NOT NULL,
    ssv_owner_address     TEXT NOT NULL,
    withdrawal_address    TEXT NOT NULL,
    fee_recipient_address TEXT NOT NULL,
    updated_at            TEXT
);
CREATE INDEX ssv_requests_status ON ssv_requests (status);

CREATE TABLE ssv_events (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    request_id  TEXT NOT NULL REFERENCES ssv_requests (id),
    from_status TEXT NOT NULL,
    to_status   TEXT NOT NULL,
    at          TEXT NOT NULL
);
CREATE INDEX ssv_events_request ON ssv_events (request_id, id);

-- +goose Down
DROP TABLE ssv_events;
DROP TABLE ssv_requests;
DROP TABLE delegator_rewards;
DROP TABLE network_apy;
