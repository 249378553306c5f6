import './sidebar.css';
import './sources.css';
import './plots.css';
import './workers.css';
import './panes.css';
import './clusters.css';
import './notebook.css';
import './history.css';
