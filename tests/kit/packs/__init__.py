"""Small packs for the duel ruleset, one module each, as a distribution would ship them."""
