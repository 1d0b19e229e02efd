"""The layered review harness: manifest, cases, neutral requests, ranking and scoring."""
