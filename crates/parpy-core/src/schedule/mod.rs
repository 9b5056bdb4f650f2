//! The parallel specification applied to labelled loops. (Placeholder.)
