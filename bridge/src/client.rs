//! Pure builders for the frames an ACP client sends. The bridge and the
//! recorder's minimal ACP client both use them, so a recording holds exactly
//! the requests the bridge will make on replay.
