-- Credentials that prove themselves (docs/hot-path.md, CONTRACT §10). Keys minted from now on
-- end with a MAC of their random part; the ones minted before are judged by a lookup only and
-- are listed as `legacy` so that their owners rotate them.
ALTER TABLE api_keys ADD COLUMN signed INTEGER NOT NULL DEFAULT 0;
