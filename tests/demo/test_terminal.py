"""The demo's input terminal publishes an input only once the controller says it is there.

A broker restarted without its sessions drops what is published before the controller is
subscribed again, and an input cannot be asked for again: the terminal waits for the
controller's retained ``online`` (said once it is subscribed). A real private mosquitto.
"""

from __future__ import annotations

import asyncio

from config.models import MqttSection
from contract.models import Status, parse_input
from contract.timestamps import utc_now
from contract.topics import Topics
from controller.demo.terminal import SOURCE, InputTerminal
from link.client import make_client
from testing.mosquitto import Mosquitto

#: Time the terminal is given to publish before the controller is there (an input published
#: without waiting arrives within it; the assertion is on the order, not on an absence).
BEFORE_ONLINE_S = 0.5


async def test_an_input_waits_for_the_controller_to_say_it_is_there(mosquitto_session: Mosquitto) -> None:
    mqtt = MqttSection(url=mosquitto_session.url)
    topics = Topics("holdem", "terminal-waits")
    seen: list[str] = []
    async with make_client(mqtt, "terminal-test-watch") as watch:
        await watch.subscribe([(topics.input, 1), (topics.controller_status, 1)])
        terminal = InputTerminal(mqtt, topics)
        sending = asyncio.create_task(terminal.dealer("D-7"))
        await asyncio.sleep(BEFORE_ONLINE_S)
        online = Status(state="online", ts=utc_now(), session=1)
        async with make_client(mqtt, "terminal-test-controller") as controller:
            await controller.publish(topics.controller_status, online.to_json(), qos=1, retain=True)
        async with asyncio.timeout(10):
            async for message in watch.messages:
                topic = str(message.topic)
                seen.append(topic)
                if topic == topics.input:
                    assert isinstance(message.payload, bytes)
                    item = parse_input(topic, message.payload)
                    assert (item.type, item.seq, item.source) == ("dealer", 1, SOURCE)
                    break
        await sending
        async with make_client(mqtt, "terminal-test-clear") as clear:  # (the retained status)
            await clear.publish(topics.controller_status, b"", qos=1, retain=True)
    assert seen == [topics.controller_status, topics.input]
