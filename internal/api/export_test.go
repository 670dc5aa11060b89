package api

// RunsInFlight is runsInFlight, for the tests of package api_test.
const RunsInFlight = runsInFlight
