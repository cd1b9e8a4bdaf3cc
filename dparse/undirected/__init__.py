"""Edge-linear undirected MST parsing (Levi, Reichart and Rappoport 2016): the parser
(:mod:`.parser`) and its decoders (:mod:`.decoders`)."""
