"""A small harness around headless Chromium (Debian's chromium and chromium-driver, driven by
Selenium) for the interactive HTML pages: open a file, click and double-click a box, type a search,
read the panel, take a screenshot. Chromium runs with no network and a fresh profile."""

from __future__ import annotations

import pathlib
import shutil
import tempfile
import time
from typing import Any

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


def browser_missing() -> str:
    """Why the browser tests cannot run here ("" when they can): CI installs both (`.ci/run`)."""
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if shutil.which(p) is None]
    return f"headless Chromium is missing ({', '.join(missing)}): apt-get install chromium chromium-driver" if missing else ""


class Page:
    """One page in one headless Chromium window of `width` x `height` CSS px."""

    def __init__(self, width: int = 1400, height: int = 900) -> None:
        self.profile = tempfile.mkdtemp(prefix="jaxscope-chromium-")
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in (
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={self.profile}",
            f"--window-size={width},{height}",
        ):
            options.add_argument(flag)
        self.driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        self.driver.set_page_load_timeout(180)

    def open(self, path: pathlib.Path, fragment: str = "", timeout: float = 30) -> float:
        """Load the page from file:// (with `#fragment`); seconds until its script said it is ready."""
        self.driver.get("about:blank")  # (the same file with another fragment would not load again)
        start = time.perf_counter()
        self.driver.get(path.resolve().as_uri() + (f"#{fragment}" if fragment else ""))
        deadline = start + timeout
        while (state := self.js("return document.body && document.body.dataset.ready")) != "1":
            if state == "error":
                raise RuntimeError(self.js("return document.getElementById('damaged').textContent"))
            if time.perf_counter() > deadline:
                raise TimeoutError(f"{path} did not become ready: {self.errors()}")
            time.sleep(0.02)
        return time.perf_counter() - start

    def js(self, script: str, *args: Any) -> Any:
        return self.driver.execute_script(script, *args)

    def errors(self) -> list[str]:
        return [e["message"] for e in self.driver.get_log("browser") if e.get("level") == "SEVERE"]

    def box(self, path: str) -> Any:
        return self.driver.find_element(By.CSS_SELECTOR, f'g.node[data-path="{path}"]')

    def drawn(self) -> list[str]:
        """The boxes the page lays out now (what is open), in view or not."""
        return self.js("return window.jaxscopePage.drawn().boxes.map(b => b.path)")

    def titles(self) -> list[str]:
        """The first line of each box laid out now."""
        return self.js("return window.jaxscopePage.drawn().boxes.map(b => b.n.lines[0])")

    def clusters(self) -> list[str]:
        """The frames of the opened boxes' sub-graphs laid out now, in view or not."""
        return self.js("return window.jaxscopePage.drawn().clusters.map(c => c.path)")

    def in_view(self) -> list[str]:
        """The boxes drawn as elements of their own: those in and around the view."""
        return self.js("return [...document.querySelectorAll('g.node')].map(g => g.getAttribute('data-path'))")

    def click(self, path: str) -> None:
        """A real mouse click on the box (brought to the view's centre first, as a reader scrolls to it)."""
        self.js("window.jaxscopePage.centre(arguments[0])", path)
        ActionChains(self.driver).move_to_element(self.box(path)).click().perform()

    def double_click(self, path: str) -> None:
        self.js("window.jaxscopePage.centre(arguments[0])", path)
        ActionChains(self.driver).move_to_element(self.box(path)).double_click().perform()

    def search(self, text: str) -> str:
        field = self.driver.find_element(By.ID, "search")
        field.clear()
        field.send_keys(text, Keys.ENTER)
        return self.driver.find_element(By.ID, "count").text

    def panel(self) -> str:
        return self.driver.find_element(By.ID, "panel").text

    def fragment(self) -> str:
        return self.js("return location.hash")

    def screenshot(self, path: pathlib.Path) -> None:
        self.driver.save_screenshot(str(path))

    def close(self) -> None:
        self.driver.quit()
        shutil.rmtree(self.profile, ignore_errors=True)
