"""Reading results folders for the viewer, without writing to them: which folders and kinds
(:mod:`.folders`), the catalog through a copy (:mod:`.snapshot`), the calls (:mod:`.calls`),
a build's cases (:mod:`.build`), evaluate records (:mod:`.evaluate`), belief, collab and
meeting folders (:mod:`.studies`). One place, so that it can move into the runs layer's one
reader of every folder kind."""
