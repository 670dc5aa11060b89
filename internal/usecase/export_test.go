package usecase

// RunsInFlight is runsInFlight, for the tests of package usecase_test.
const RunsInFlight = runsInFlight
