-- Runtime policies, set through the management API (/api/policies), per account.
CREATE TABLE policies (
  account_id TEXT NOT NULL,
  name       TEXT NOT NULL,
  pattern    TEXT NOT NULL,
  apply_to   TEXT NOT NULL,
  priority   INTEGER NOT NULL,
  definition TEXT NOT NULL,
  PRIMARY KEY (account_id, name)
);
