#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Drive a pgoffctl flame SVG in Debian's Chromium (headless, Selenium)
the way a user would, and print what it saw as one JSON object for
tests/e2e/test_flame_browser.sh to check: the page opened from a file,
a click on FRAME (zoom), Reset zoom, a click on "all", hovering FRAME,
Search (the button) for SEARCH1, Ctrl-F for SEARCH2, Escape.

usage: flame_browser.py SVG FRAME SEARCH1 SEARCH2 PROFILE_DIR
Runs with Debian's /usr/bin/python3 (python3-selenium)."""
import json
import sys

from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

# Without the background networking flags Chromium's own connections are
# refused on a closed network, and it logs them; the page needs none.
FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
         '--no-first-run', '--disable-background-networking',
         '--disable-component-update', '--disable-sync',
         '--window-size=1300,900']

# Every frame as the page has it now: its title's name, weight, whether
# shown, its classes and its rect.
FRAMES_JS = """
return Array.from(document.getElementById('frames').children).map(function (g) {
	var r = g.querySelector('rect'), t = g.querySelector('text');
	return {
		title: g.querySelector('title').textContent,
		name: g.querySelector('title').textContent.replace(/ \\([^()]*\\)$/, ''),
		us: Number(g.getAttribute('data-us')),
		shown: g.getAttribute('display') !== 'none',
		cls: g.getAttribute('class') || '',
		x: Number(r.getAttribute('x')), w: Number(r.getAttribute('width')),
		label: t ? t.textContent : ''
	};
});
"""


def main():
    svg, name, search1, search2, profile = sys.argv[1:6]
    seen = {'loaded': False}
    opts = webdriver.ChromeOptions()
    opts.binary_location = '/usr/bin/chromium'
    for flag in FLAGS:
        opts.add_argument(flag)
    opts.add_argument('--user-data-dir=' + profile)
    opts.set_capability('goog:loggingPrefs', {'browser': 'ALL'})
    driver = webdriver.Chrome(service=Service('/usr/bin/chromedriver'), options=opts)
    try:
        run(driver, svg, name, search1, search2, seen)
    except WebDriverException as e:
        seen['error'] = '%s: %s' % (type(e).__name__, (e.msg or str(e))[:300])
    finally:
        try:
            seen['console'] = [m['message'][:300] for m in driver.get_log('browser')
                               if m.get('level') == 'SEVERE']
        except WebDriverException:
            pass
        driver.quit()
    print(json.dumps(seen))


def frames(driver):
    return driver.execute_script(FRAMES_JS)


def frame_el(driver, name):
    """The <rect> of the frame named name (the first, in document order)."""
    for i, f in enumerate(frames(driver)):
        if f['name'] == name:
            return driver.find_elements(By.CSS_SELECTOR, '#frames > g')[i] \
                .find_element(By.TAG_NAME, 'rect')
    raise LookupError('no frame named %r' % name)


def geometry(driver, name):
    f = next(f for f in frames(driver) if f['name'] == name)
    return {'x': f['x'], 'w': f['w'], 'shown': f['shown'], 'cls': f['cls']}


def click(driver, el):
    """A real click at the element's centre: whatever is on top gets it."""
    ActionChains(driver).move_to_element(el).click().perform()


def answer_prompt(driver, text):
    alert = driver.switch_to.alert
    seen = alert.text
    alert.send_keys(text)
    alert.accept()
    return seen


def run(driver, svg, name, search1, search2, seen):
    driver.get('file://' + svg)
    seen['loaded'] = True
    seen['controls_display'] = driver.execute_script(
        "return document.getElementById('controls').getAttribute('display')")
    seen['resources'] = driver.execute_script(
        "return performance.getEntriesByType('resource').map(function (e) { return e.name; })")
    before = frames(driver)
    seen['frames'] = len(before)
    seen['full'] = before[0]['w']
    seen['before'] = geometry(driver, name)

    # zoom: the frame fills the width, its subtree rescales, its
    # ancestors stay at full width, everything else is hidden
    click(driver, frame_el(driver, name))
    after = frames(driver)
    z = next(i for i, f in enumerate(after) if f['name'] == name)
    seen['zoomed'] = geometry(driver, name)
    seen['zoom_label'] = after[z]['label']
    seen['all_zoomed'] = {'w': after[0]['w'], 'shown': after[0]['shown'],
                          'cls': after[0]['cls']}
    # its subtree: the frames after it (the writer's order) that were
    # within its extent, until one was not; each now as wide as its share
    # of it
    subtree, wrong = [], []
    for f, was in zip(after[z + 1:], before[z + 1:]):
        if was['x'] < before[z]['x'] - 0.01 or \
           was['x'] + was['w'] > before[z]['x'] + before[z]['w'] + 0.01:
            break
        subtree.append(f['name'])
        want = f['us'] / after[z]['us'] * seen['full']
        if not f['shown'] or abs(f['w'] - want) > 0.011:
            wrong.append('%s: %.2f px, want %.2f' % (f['name'], f['w'], want))
    seen['subtree'] = len(subtree)
    seen['subtree_wrong'] = wrong
    seen['shown_outside'] = [f['name'] for i, f in enumerate(after)
                             if f['shown'] and i != 0 and i != z and
                             f['name'] not in subtree]
    seen['hidden'] = sum(1 for f in after if not f['shown'])
    seen['reset_class_zoomed'] = driver.find_element(By.ID, 'reset').get_attribute('class')

    driver.find_element(By.ID, 'reset').click()
    seen['after_reset'] = geometry(driver, name)
    seen['unchanged_after_reset'] = frames(driver) == before
    seen['reset_class_after'] = driver.find_element(By.ID, 'reset').get_attribute('class')

    click(driver, frame_el(driver, name))
    seen['zoomed_again'] = geometry(driver, name)
    click(driver, frame_el(driver, 'all'))
    seen['unchanged_after_root'] = frames(driver) == before

    ActionChains(driver).move_to_element(frame_el(driver, name)).perform()
    seen['details'] = driver.find_element(By.ID, 'details').text
    seen['title'] = before[z]['title']

    driver.find_element(By.ID, 'search').click()
    seen['prompt'] = answer_prompt(driver, search1)
    seen['matched1'] = driver.find_element(By.ID, 'matched').text
    seen['highlighted1'] = sorted({f['name'] for f in frames(driver) if 'm' in f['cls'].split()})

    ActionChains(driver).key_down(Keys.CONTROL).send_keys('f').key_up(Keys.CONTROL).perform()
    answer_prompt(driver, search2)
    seen['matched2'] = driver.find_element(By.ID, 'matched').text
    seen['highlighted2'] = sorted({f['name'] for f in frames(driver) if 'm' in f['cls'].split()})

    ActionChains(driver).send_keys(Keys.ESCAPE).perform()
    seen['matched_escape'] = driver.find_element(By.ID, 'matched').text
    seen['highlighted_escape'] = sum(1 for f in frames(driver) if 'm' in f['cls'].split())


if __name__ == '__main__':
    main()
