-- Server secrets shared by every node (the receipt-handle key).
CREATE TABLE secrets (
  name  TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
