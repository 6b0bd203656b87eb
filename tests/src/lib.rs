//! Tests only: see tests/*.rs.
