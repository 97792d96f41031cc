//! The embedded C sources (the only C in the repository lives under `csrc/`).
