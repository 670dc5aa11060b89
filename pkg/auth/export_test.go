package auth

// DummyHash is what a login naming no user verifies against.
const DummyHash = dummyHash
