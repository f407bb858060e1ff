"""The one web stack of the dealer's display and the floor console.

Starlette + uvicorn: a small, typed ASGI toolkit and a pure-Python server (h11) that run inside
the program's own asyncio loop, next to the MQTT client, with no thread and no second process.
Live updates are server-sent events (plain HTTP, reconnected by the browser itself; no WebSocket
library needed). Pages are plain HTML with small hand-written JavaScript modules, all served from
the package: no CDN, no build step. Nothing here is imported unless a web page is configured.
"""
