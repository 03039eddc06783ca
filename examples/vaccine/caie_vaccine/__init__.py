"""The vaccine-education domain as a plugin of the OB-CAIE engine (issue 25): what of measles and its vaccine is
code rather than data. Its grounded checks (:mod:`.checks`), the demonstration chatbot (:mod:`.demo`) and the
worked example ``make run`` loads (:mod:`.worked_example`) are found by the engine through this package's entry
points (``pyproject.toml``); the DSO, knowledge graphs, shapes and judges stay data in the repository.
"""

from typing import Final

VE: Final = "https://w3id.org/ob-caie/dso/vaccine-education/"
"""The vaccine-education DSO's namespace, registered as the ``ve:`` prefix (entry-point group ``caie.prefixes``)."""
