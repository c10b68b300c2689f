-- Runs once, when the PostgreSQL data volume is first initialised (POSTGRES_DB creates "temporal").
-- Temporal keeps its visibility records in a second database.
CREATE DATABASE temporal_visibility;
