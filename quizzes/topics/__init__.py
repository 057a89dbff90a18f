"""One module per topic; each exposes TOPIC (its title) and QUESTIONS."""
