-- +goose Up
-- A record the data jobs found contradicting itself or the chain (netAmount not amount minus fee,
-- a period that ends before it starts, an APY beyond what a chain can pay) is kept, flagged: the
-- reasons, one line; NULL for a record as the service's interface means it.
ALTER TABLE network_apy ADD COLUMN flag_reason TEXT;
ALTER TABLE delegator_rewards ADD COLUMN flag_reason TEXT;
ALTER TABLE ssv_requests ADD COLUMN flag_reason TEXT;

-- +goose Down
ALTER TABLE ssv_requests DROP COLUMN flag_reason;
ALTER TABLE delegator_rewards DROP COLUMN flag_reason;
ALTER TABLE network_apy DROP COLUMN flag_reason;
