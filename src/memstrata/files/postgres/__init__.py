"""The truth in PostgreSQL (the `postgres` extra): memstrata shared by many hosts."""
