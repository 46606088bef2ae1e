-- Server secrets shared by every process on this database (the receipt-handle key).
CREATE TABLE secrets (
  name  TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
