"""What both engines run: payloads (what is committed), operations (what is timed), and
seeds (a repository built once and copied into each round)."""
