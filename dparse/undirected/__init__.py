"""Edge-linear undirected MST parsing (Levi, Reichart and Rappoport 2016): the parser
(:mod:`.parser`) and its decoders (:mod:`.decoders`); the ``umst`` config section
(:mod:`.sections`), its check (:mod:`.checks`) and the family's record in the registry
(:mod:`.family`)."""
