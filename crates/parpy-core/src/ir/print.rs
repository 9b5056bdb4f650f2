//! IR printer. (Placeholder.)
