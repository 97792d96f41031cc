//! Empty: this package exists only so cargo fetches its dependencies.
