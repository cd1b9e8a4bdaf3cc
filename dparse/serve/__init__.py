"""``dparse serve``: trained models behind HTTP, with UDPipe's REST interface and a page that
draws the trees (``pip install 'dparse[serve]'``: Starlette and uvicorn).

Modules, the HTTP-free ones first: ``errors`` (the error a request gets, the extra's check),
``models`` (the models a server holds, by name), ``params`` (a request's parameters from its
query string and body), ``process`` (UDPipe's ``/process`` over dparse: parameters in,
CoNLL-U out), ``limits`` (body size, sentence length and the queue of work), ``page`` (the
HTML page at ``/``), ``app`` (the Starlette application and the uvicorn settings). Nothing
imports Starlette or uvicorn before ``app``, which only ``dparse serve`` and the tests load.
"""
