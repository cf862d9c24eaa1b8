package api

// auth is the Authorization header of testAPIKey, as f.do takes headers.
var auth = []string{"Authorization", "Bearer " + testAPIKey}

func ptr[T any](v T) *T { return &v }
