"""Plan builders shared by every family: output projection, time ordinals, statistics."""
