//! IR verifier. (Placeholder.)
